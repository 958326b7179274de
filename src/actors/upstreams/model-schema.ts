/** ModelDTO: the input form of a capability registry entry, for the admin API and registry payloads alike. */
export const modelKinds = ['chat', 'completion', 'embedding', 'image', 'audio', 'rerank'] as const;

export const modelDtoProperties = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  kind: { type: 'string', enum: [...modelKinds], description: 'default chat' },
  context_window: { type: 'integer', minimum: 0, maximum: 100_000_000 },
  max_output_tokens: { type: 'integer', minimum: 0, maximum: 100_000_000 },
  cost_per_token: { type: 'number', minimum: 0 },
  supports_fim: { type: 'boolean' },
  supports_functions: { type: 'boolean' },
  supports_tool_choice: { type: 'boolean' },
  supports_vision: { type: 'boolean' },
} as const;

export const modelDto = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: modelDtoProperties,
} as const;

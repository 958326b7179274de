/** ModelDTO: the input form of a capability registry entry, for the admin API and registry payloads alike. */
export const modelKinds = ['chat', 'completion', 'embedding', 'image', 'audio', 'rerank'] as const;

/** Prices are exact to 12 decimal places (decisions.md, "Money"); the bound keeps a record's cost within Decimal(38,12). */
const price = { type: 'number', minimum: 0, maximum: 1_000_000 } as const;
const nullablePrice = { type: ['number', 'null'], minimum: 0, maximum: 1_000_000 } as const;

export const modelDtoProperties = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  kind: { type: 'string', enum: [...modelKinds], description: 'default chat' },
  context_window: { type: 'integer', minimum: 0, maximum: 100_000_000 },
  max_output_tokens: { type: 'integer', minimum: 0, maximum: 100_000_000 },
  cost_per_token: { ...price, description: 'price per token in the service currency unit (docs/spend.md); default 0' },
  cost_per_input_token: { ...nullablePrice, description: 'price per input token; null or absent: cost_per_token' },
  cost_per_output_token: { ...nullablePrice, description: 'price per output token; null or absent: cost_per_token' },
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

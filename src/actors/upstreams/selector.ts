/** Binding selectors: how a binding's selector_value resolves to one of its group's upstream models. */
export { selectorTypes } from './handles.js';

/** The upstream model a binding targets, or null when the selector matches none of the group's models. */
export function resolveSelector(type: string, value: string, groupModels: string[]): string | null {
  if (type === 'exact') return groupModels.includes(value) ? value : null;
  return null;
}

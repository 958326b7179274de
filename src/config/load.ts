/**
 * Loads the configuration from the environment and the optional SVC_CONFIG
 * file (YAML or JSON, dotted or nested names); the environment wins. A bad
 * value throws a ConfigError whose message is one line naming the setting.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { settingSpecs, type Config, type SettingSpec } from './settings.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const levels = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const file = env.SVC_CONFIG ? readConfigFile(env.SVC_CONFIG) : {};
  const config: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(settingSpecs) as [string, SettingSpec][]) {
    const fromEnv = env[spec.env];
    const raw = fromEnv !== undefined && fromEnv !== '' ? fromEnv : file[spec.key];
    config[name] = raw === undefined || raw === '' ? spec.default : parseSetting(spec, raw);
  }
  return config as Config;
}

function parseSetting(spec: SettingSpec, raw: unknown): string | number | boolean {
  const fail = (why: string): never => {
    throw new ConfigError(`invalid setting ${spec.env} (${spec.key}): ${why}`);
  };
  const text = String(raw).trim();
  switch (spec.type) {
    case 'string':
      return text;
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (/^(true|1|yes|on)$/i.test(text)) return true;
      if (/^(false|0|no|off)$/i.test(text)) return false;
      return fail(`expected true or false, got "${text}"`);
    case 'port':
    case 'int': {
      if (!/^-?\d+$/.test(text)) return fail(`expected an integer, got "${text}"`);
      const n = Number(text);
      if (spec.type === 'port' && (n < 0 || n > 65535)) return fail(`expected a port 0-65535, got ${n}`);
      if (spec.min !== undefined && n < spec.min) return fail(`must be >= ${spec.min}, got ${n}`);
      return n;
    }
    case 'choice':
      if (!spec.values?.includes(text)) return fail(`expected one of ${(spec.values ?? []).join(', ')}, got "${text}"`);
      return text;
    case 'level':
      if (!levels.has(text)) return fail(`expected one of ${[...levels].join(', ')}, got "${text}"`);
      return text;
    case 'url': {
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        return fail('not a valid URL');
      }
      if (spec.schemes && !spec.schemes.includes(url.protocol)) {
        return fail(`scheme must be one of ${spec.schemes.join(', ')}`);
      }
      return text;
    }
  }
}

/** Reads YAML or JSON and flattens nested objects to dotted names. */
function readConfigFile(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`invalid setting SVC_CONFIG: cannot read ${path}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`invalid setting SVC_CONFIG: ${path} must hold an object`);
  }
  const flat: Record<string, unknown> = {};
  const walk = (obj: Record<string, unknown>, prefix: string): void => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) walk(v as Record<string, unknown>, key);
      else flat[key] = v;
    }
  };
  walk(parsed as Record<string, unknown>, '');
  const known = new Set<string>(Object.values(settingSpecs).map((s) => s.key));
  for (const key of Object.keys(flat)) {
    if (!known.has(key)) throw new ConfigError(`invalid setting SVC_CONFIG: unknown setting "${key}" in ${path}`);
  }
  return flat;
}

/**
 * The command line: two flags, everything else is configured by environment variables or the SVC_CONFIG file.
 * An unknown argument is an error, so that a mistyped flag never starts a service on the defaults.
 */
import { settingSpecs, type SettingSpec } from './config/settings.js';

export type Command = { kind: 'start' } | { kind: 'help' } | { kind: 'version' } | { kind: 'error'; message: string };

export function parseArgs(args: string[]): Command {
  if (args.length === 0) return { kind: 'start' };
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) return { kind: 'help' };
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) return { kind: 'version' };
  const unknown = args.find((a) => !['--help', '-h', '--version', '-v'].includes(a)) ?? args[1]!;
  return { kind: 'error', message: `unknown argument "${unknown}" (settings are environment variables; see --help)` };
}

export function usage(): string {
  const rows = (Object.values(settingSpecs) as SettingSpec[]).map((s) => {
    const def = s.default === undefined || s.default === '' ? '' : ` (default ${String(s.default)})`;
    return `  ${s.env.padEnd(34)} ${s.description}${def}`;
  });
  return [
    'Usage: gateway-cp [--help | --version]',
    '',
    'Starts the control plane. Settings come from environment variables, or from the YAML/JSON file named by',
    'SVC_CONFIG (the environment wins). With no store URLs it runs on embedded stores in SVC_DATA_DIR.',
    'SIGTERM or SIGINT stops it cleanly. Exit codes: 0 stopped, 1 start-up failure, 2 bad setting or argument.',
    '',
    '  -h, --help                         print this and exit',
    '  -v, --version                      print the version and exit',
    '',
    'Settings:',
    ...rows,
    '',
  ].join('\n');
}

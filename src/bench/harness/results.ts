/**
 * A scenario's outcome, as printed and as written to bench/results/<name>.json.
 * `ratio` is what bench:check compares with bench/baseline.json: the service
 * against a ceiling measured in the same run, so machine speed and noise
 * mostly cancel out.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { machine, type Machine } from './machine.js';
import { resultsDir } from './paths.js';

export interface Target {
  name: string;
  met: boolean;
  /** The measured value and the bound, in the target's unit. */
  value: number;
  bound: number;
}

export interface ScenarioResult {
  scenario: string;
  date: string;
  machine: Machine;
  status: 'ok' | 'skipped';
  /** Why it was skipped. */
  reason?: string;
  ratio?: { name: string; value: number };
  figures: Record<string, number | string | boolean | null>;
  /** Per-round figures, when the scenario runs paired rounds. */
  rounds?: Array<Record<string, number>>;
  targets: Target[];
}

export function okResult(
  scenario: string,
  ratio: { name: string; value: number },
  figures: ScenarioResult['figures'],
  targets: Target[],
  rounds?: ScenarioResult['rounds'],
): ScenarioResult {
  return { scenario, date: new Date().toISOString(), machine: machine(), status: 'ok', ratio, figures, rounds, targets };
}

export function skippedResult(scenario: string, reason: string): ScenarioResult {
  return { scenario, date: new Date().toISOString(), machine: machine(), status: 'skipped', reason, figures: {}, targets: [] };
}

/** `value >= bound` (or `<=` with atMost), as a Target. */
export function target(name: string, value: number, bound: number, atMost = false): Target {
  return { name, met: atMost ? value <= bound : value >= bound, value, bound };
}

export function writeResult(r: ScenarioResult): string {
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${r.scenario}.json`);
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  return file;
}

export function readResults(): Map<string, ScenarioResult> {
  const out = new Map<string, ScenarioResult>();
  let names: string[] = [];
  try {
    names = readdirSync(resultsDir).filter((n) => n.endsWith('.json'));
  } catch {
    return out;
  }
  for (const name of names) {
    const r = JSON.parse(readFileSync(join(resultsDir, name), 'utf8')) as ScenarioResult;
    out.set(r.scenario, r);
  }
  return out;
}

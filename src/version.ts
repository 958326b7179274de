/**
 * The running version: injected at build time into dist/build-info.json by
 * scripts/build.mjs, falling back to package.json when absent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface BuildInfo {
  name: string;
  version: string;
  description: string;
  repository: string;
  commit: string;
}

const fromRoot = (p: string): string => fileURLToPath(new URL(`../../${p}`, import.meta.url));

export function loadBuildInfo(): BuildInfo {
  const pkg = JSON.parse(readFileSync(fromRoot('package.json'), 'utf8')) as {
    name: string;
    version: string;
    description: string;
    repository?: { url?: string } | string;
  };
  const repository = typeof pkg.repository === 'string' ? pkg.repository : (pkg.repository?.url ?? '');
  const injectedPath = fromRoot('dist/build-info.json');
  const injected = existsSync(injectedPath)
    ? (JSON.parse(readFileSync(injectedPath, 'utf8')) as Partial<BuildInfo>)
    : {};
  return {
    name: pkg.name,
    description: pkg.description,
    repository,
    version: injected.version ?? pkg.version,
    commit: injected.commit ?? 'unknown',
  };
}

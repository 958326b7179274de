/**
 * Matches a method and path against the route table. Static paths are one map
 * lookup (the hot ingestion path); templated paths are matched segment by
 * segment. A known path with another method is a 405, not a 404.
 */
import type { Method } from './route.js';

export interface Match<T> {
  route: T;
  params: Record<string, string>;
}

export type Lookup<T> = { found: Match<T> } | { allowed: Method[] } | null;

interface Template<T> {
  segments: string[];
  byMethod: Map<Method, T>;
}

export class Router<T> {
  private readonly exact = new Map<string, Map<Method, T>>();
  private readonly templates: Template<T>[] = [];

  add(method: Method, path: string, route: T): void {
    const byMethod = path.includes('{') ? this.template(path) : this.exactPath(path);
    if (byMethod.has(method)) throw new Error(`route declared twice: ${method} ${path}`);
    byMethod.set(method, route);
  }

  lookup(method: Method, path: string): Lookup<T> {
    const exact = this.exact.get(path);
    if (exact) {
      const route = exact.get(method);
      return route ? { found: { route, params: {} } } : { allowed: [...exact.keys()] };
    }
    const parts = path.split('/');
    let allowed: Method[] | null = null;
    for (const t of this.templates) {
      const params = matchSegments(t.segments, parts);
      if (!params) continue;
      const route = t.byMethod.get(method);
      if (route) return { found: { route, params } };
      allowed ??= [...t.byMethod.keys()];
    }
    return allowed ? { allowed } : null;
  }

  private exactPath(path: string): Map<Method, T> {
    let m = this.exact.get(path);
    if (!m) this.exact.set(path, (m = new Map()));
    return m;
  }

  private template(path: string): Map<Method, T> {
    const segments = path.split('/');
    let t = this.templates.find((x) => x.segments.join('/') === segments.join('/'));
    if (!t) {
      t = { segments, byMethod: new Map() };
      this.templates.push(t);
      // Literal segments beat parameters: /admin/api-keys/batch before /admin/api-keys/{id}.
      this.templates.sort((a, b) => specificity(b.segments) - specificity(a.segments));
    }
    return t.byMethod;
  }
}

function matchSegments(template: string[], parts: string[]): Record<string, string> | null {
  if (template.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const seg = template[i]!;
    const part = parts[i]!;
    if (seg.startsWith('{')) {
      if (part === '') return null;
      try {
        params[seg.slice(1, -1)] = decodeURIComponent(part);
      } catch {
        return null;
      }
    } else if (seg !== part) {
      return null;
    }
  }
  return params;
}

const specificity = (segments: string[]): number =>
  segments.reduce((n, s, i) => n + (s.startsWith('{') ? 0 : 2 ** (16 - Math.min(i, 16))), 0);

/**
 * Engine objects arrive snake_case (the CLI's --json shape), wrappers camelCase: one function
 * turns every key into camelCase so the rest of the client sees one casing.
 *
 * Pure module: nothing under src/model/ imports `vscode` (unit-tested with `node --test`).
 */

const SNAKE = /_([a-z0-9])/g;

/** `next_action` -> `nextAction`; keys that are data (URIs, ids, paths) pass unchanged. */
export function camelKey(key: string): string {
  if (!key.includes("_") || /[^A-Za-z0-9_]/.test(key) || key.startsWith("_")) {
    return key;
  }
  return key.replace(SNAKE, (_m, c: string) => c.toUpperCase());
}

/** A deep copy of `value` with camelCase object keys. */
export function camelize<T = unknown>(value: unknown): T {
  if (Array.isArray(value)) {
    return value.map((v) => camelize(v)) as T;
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      out[camelKey(key)] = camelize(v);
    }
    return out as T;
  }
  return value as T;
}

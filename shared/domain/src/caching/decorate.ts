/**
 * A store with some methods replaced and every other one passed through to `inner`, so that a
 * caching decorator names only the methods it caches or invalidates and follows the port as it
 * grows.
 */
export function decorate<T extends object>(inner: T, overrides: Partial<T>): T {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (Object.prototype.hasOwnProperty.call(overrides, prop))
        return (overrides as Record<PropertyKey, unknown>)[prop];
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

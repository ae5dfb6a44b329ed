export * from './app.js';
export * from './deps.js';
export * from './http/errors.js';
export * from './http/auth.js';
export * from './http/context.js';
export * from './completions/upstream-routing.js';
export * from './completions/wire-format.js';

export * from './canonical.js';
export * from './upstream.js';
export * from './stream-moderator.js';
export * from './protect-completion.js';
export * from './abort.js';

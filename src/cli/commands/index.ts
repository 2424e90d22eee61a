/**
 * Every kbsync command. Each file exports `register(program, ctx)`; adding a command is one line
 * here (`kbsync --help` lists commands in the order commander sees them: alphabetical by export name).
 */
export { register as agents } from './agents.js';
export { register as audit } from './audit.js';
export { register as chat } from './chat.js';
export { register as check } from './check.js';
export { register as config } from './config.js';
export { register as explain } from './explain.js';
export { register as init } from './init.js';
export { register as plan } from './plan.js';
export { register as query } from './query.js';
export { register as serve } from './serve.js';
export { register as state } from './state.js';
export { register as status } from './status.js';
export { register as sync } from './sync.js';
export { register as watch } from './watch.js';

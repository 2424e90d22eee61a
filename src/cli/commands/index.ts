/**
 * Every kbsync command. Each file exports `register(program, ctx)`; adding a command is one line
 * here (`kbsync --help` lists commands in the order commander sees them: alphabetical by export name).
 */
export { register as config } from './config.js';
export { register as init } from './init.js';

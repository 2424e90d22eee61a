/** The service's database in its data folder (`kbsync serve --data`, the embedded target's dataDir). */
export const SERVICE_DB_FILE = 'service.db';

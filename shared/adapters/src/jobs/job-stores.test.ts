import { jobStoreContract } from '@guard/testing';
import { MemoryJobStore } from '../memory/memory-job-store.js';
import { openSqlite } from '../sqlite/sqlite-database.js';
import { SqliteJobStore } from '../sqlite/sqlite-job-store.js';

jobStoreContract('memory', () => new MemoryJobStore());
jobStoreContract('sqlite', () => new SqliteJobStore(openSqlite(':memory:')));

import Database from 'better-sqlite3';

/**
 * Read the recorded activity straight from the embedded store (the export endpoints are a later
 * feature). Opened read-only: the server stays the only writer.
 */
export function readActivity(dataDir: string, id: string): Record<string, any> | null {
  const db = new Database(`${dataDir}/guard.db`, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT doc FROM activities WHERE id = ?').get(id) as
      { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as Record<string, any>) : null;
  } finally {
    db.close();
  }
}

export function countActivities(dataDir: string): number {
  const db = new Database(`${dataDir}/guard.db`, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM activities').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

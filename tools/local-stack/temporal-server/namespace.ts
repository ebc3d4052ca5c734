import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';

// A fresh cluster has only its system namespace; the dev server creates the user's namespace
// itself, here it is registered once, as an operator would with `temporal operator namespace create`.

// gRPC status codes the frontend answers with.
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;

/** How long closed workflow runs (continued-as-new relay runs, finished credit batches) stay listed. */
export const NAMESPACE_RETENTION_MS = 3 * 24 * 3600_000;

export async function ensureNamespace(connection: Connection, namespace: string): Promise<boolean> {
  if (await namespaceExists(connection, namespace)) return false;
  try {
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(NAMESPACE_RETENTION_MS) });
  } catch (err) {
    // Registered concurrently by another `up`.
    if ((err as { code?: number }).code !== ALREADY_EXISTS) throw err;
  }
  return true;
}

async function namespaceExists(connection: Connection, namespace: string): Promise<boolean> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === NOT_FOUND) return false;
    throw err;
  }
}

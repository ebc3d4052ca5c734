import type { SchemaRegistrySettings } from './settings';

// A small client of the Confluent Schema Registry REST API: the three calls the encoder and the
// decoder need, each one bounded by the settings' request timeout. Callers cache what it returns;
// it caches nothing itself.

export type RegistrySchemaType = 'AVRO' | 'JSON';

export interface RegisteredSchema {
  id: number;
  schema: string;
  schemaType: RegistrySchemaType;
}

/** The registry could not be asked (refused connection, timeout, 5xx): worth trying again later. */
export class RegistryUnavailableError extends Error {
  override name = 'RegistryUnavailableError';
}

/** The registry answered no (unknown subject or id, an incompatible or invalid schema): asking again gives the same answer. */
export class RegistryRefusedError extends Error {
  override name = 'RegistryRefusedError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';

export class SchemaRegistryClient {
  private readonly baseUrl: string;
  private readonly authorization?: string;

  constructor(private readonly settings: Pick<SchemaRegistrySettings, 'url' | 'requestTimeoutMs' | 'username' | 'password'>) {
    this.baseUrl = settings.url.replace(/\/+$/, '');
    if (settings.username !== undefined) this.authorization = `Basic ${Buffer.from(`${settings.username}:${settings.password ?? ''}`).toString('base64')}`;
  }

  /** Registers the schema under the subject, or finds it there already: its global id either way. */
  async register(subject: string, schema: string, schemaType: RegistrySchemaType): Promise<number> {
    // AVRO is the API's default type; older registries know no schemaType field at all.
    const body = schemaType === 'AVRO' ? { schema } : { schema, schemaType };
    const answer = await this.call<{ id: number }>('POST', `/subjects/${encodeURIComponent(subject)}/versions`, body);
    return answer.id;
  }

  /** The newest version registered under the subject. */
  async latest(subject: string): Promise<RegisteredSchema> {
    const answer = await this.call<{ id: number; schema: string; schemaType?: string }>('GET', `/subjects/${encodeURIComponent(subject)}/versions/latest`);
    return { id: answer.id, schema: answer.schema, schemaType: schemaTypeOf(answer.schemaType) };
  }

  /** The schema with this global id (ids never change meaning, so callers cache it for good). */
  async byId(id: number): Promise<RegisteredSchema> {
    const answer = await this.call<{ schema: string; schemaType?: string }>('GET', `/schemas/ids/${id}`);
    return { id, schema: answer.schema, schemaType: schemaTypeOf(answer.schemaType) };
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = { accept: CONTENT_TYPE };
    if (body !== undefined) headers['content-type'] = CONTENT_TYPE;
    if (this.authorization !== undefined) headers.authorization = this.authorization;
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(this.settings.requestTimeoutMs) });
      text = await response.text();
    } catch (err) {
      const cause = (err as Error).name === 'TimeoutError' ? `no answer within ${this.settings.requestTimeoutMs} ms` : describeCause(err);
      throw new RegistryUnavailableError(`schema registry ${method} ${url}: ${cause}`);
    }
    if (response.ok) return JSON.parse(text) as T;
    const message = `schema registry ${method} ${url} answered ${response.status}: ${registryMessage(text)}`;
    if (response.status >= 500 || response.status === 429 || response.status === 408) throw new RegistryUnavailableError(message);
    throw new RegistryRefusedError(message, response.status);
  }
}

function schemaTypeOf(type: string | undefined): RegistrySchemaType {
  if (type === undefined || type === 'AVRO') return 'AVRO';
  if (type === 'JSON') return 'JSON';
  throw new RegistryRefusedError(`schema type ${type} is not supported (only AVRO and JSON)`, 0);
}

/** The registry's own `message` when its error body has one, else the body's start. */
function registryMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message.slice(0, 300);
  } catch {
    // Not JSON: a proxy's page, say.
  }
  return text.slice(0, 300);
}

/** fetch hides the socket's error in `cause` ("fetch failed" alone says nothing). */
function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

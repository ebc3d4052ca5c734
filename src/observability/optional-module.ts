// Packages the library uses only to export traces (the OpenTelemetry SDK and exporter, Temporal's
// OpenTelemetry interceptors) are optional peer dependencies: a service that registers its own
// tracer provider, or exports nothing, need not install them. They are loaded on first use.

/** The module, or undefined when it is not installed (any other failure to load it is thrown). */
export function optionalModule<T>(name: string): T | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(name) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes(`'${name}'`)) return undefined;
    throw err;
  }
}

/** The module, or an error naming the package and the command that installs it. */
export function requiredModule<T>(name: string, packageName: string, purpose: string): T {
  const found = optionalModule<T>(name);
  if (found === undefined) throw new Error(`${purpose} needs the package ${packageName}, which is not installed: run \`npm install ${packageName}\` in your service`);
  return found;
}

// Mocha root hook module: tests run against the local stack unless the environment names other
// services. The library's configuration knows nothing of the stack, so its variables are set
// here, once, before any test reads them (and every process a test starts inherits them).
import '../../tools/local-stack/apply-stack-env';

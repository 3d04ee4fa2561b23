// Entry point of `node dist/main.js`: configuration from the environment, graceful shutdown
// on SIGINT / SIGTERM. Everything testable lives in cli.ts and app.ts.
import { runCli } from './cli';

runCli(process.env).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

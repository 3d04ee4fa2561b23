// Entry point of `node dist/main.js`: configuration from the environment, graceful shutdown
// on SIGINT / SIGTERM. Everything testable lives in cli.ts and app.ts. The chat page's
// script was bundled next to this file by the build (dist/public/chat.js).
import { existsSync, readFileSync } from 'node:fs';
import { processIo, runCli } from './cli';

const scriptFile = new URL('./public/chat.js', import.meta.url);
const pageScript = existsSync(scriptFile) ? readFileSync(scriptFile, 'utf8') : undefined;

runCli(process.env, processIo, pageScript === undefined ? {} : { pageScript }).catch(
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

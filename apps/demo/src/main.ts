// Entry point of `node dist/main.js`: configuration from the environment, graceful shutdown
// on SIGINT / SIGTERM. Everything testable lives in cli.ts and app.ts. The chat
// and document pages' scripts were bundled next to this file by the build (dist/public/).
import { existsSync, readFileSync } from 'node:fs';
import { processIo, runCli } from './cli';

const read = (name: string): string | undefined => {
  const file = new URL(`./public/${name}`, import.meta.url);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
};
const pageScript = read('chat.js');
const docScript = read('doc.js');

runCli(process.env, processIo, {
  ...(pageScript === undefined ? {} : { pageScript }),
  ...(docScript === undefined ? {} : { docScript }),
}).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * The HTTP path of a server as one named, ordered list of stages: each wraps the stages
 * after it, the first one sees a request first, and the last one wraps the routes.
 */
import type { Request, Response } from '@pkg/http';

/** Answers one request (synchronously when it can). */
export type HttpDispatch = (request: Request) => Response | Promise<Response>;

/** One stage: its name (for docs and tests) and how it wraps the stages after it. */
export interface HttpStage {
  readonly name: string;
  readonly wrap: (next: HttpDispatch) => HttpDispatch;
}

/** The stages around `routes`, first stage outermost. */
export function composeHttp(stages: readonly HttpStage[], routes: HttpDispatch): HttpDispatch {
  let dispatch = routes;
  for (let i = stages.length - 1; i >= 0; i -= 1) dispatch = stages[i]!.wrap(dispatch);
  return dispatch;
}

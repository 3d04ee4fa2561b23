import { SocketController, bytesSchema, type ControllerHost } from '@pkg/core';
import { RateLimit, SocketOn } from '@pkg/decorators';
import { z } from 'zod';
import type { DocClientEvents, DocServerEvents } from '../events';
import { DOC_HISTORY_SIZE, DOC_NAMESPACE, MAX_DOC_UPDATE_BYTES } from '../doc-rules';
import { BASE_LIMITS, type DemoLimits } from '../limits';
import { userOf } from '../names';
import { ROOM_NAME, decideRoomJoin } from '../room-policy';
import { ChatRefusal } from './chat-controller';

/**
 * The documents keep history: the last DOC_HISTORY_SIZE updates of each for 24 hours, which
 * a page entering the document reads (`$history`) and a page coming back is replayed
 * (recovery). Pages keep the whole document in it by sending their whole state every
 * STATE_EVERY updates (`browser/doc-sync.ts`).
 */
export const DOC_HISTORY = Object.freeze({
  match: '*',
  namespace: DOC_NAMESPACE,
  size: DOC_HISTORY_SIZE,
  ttl: 86_400_000,
});

/** `error` code of an update from a client that has opened no document. */
export const NOT_IN_DOC = 'not_in_doc';

const DOC_KEY = 'doc';

/** `doc.update` and `doc.state`: bytes, at most MAX_DOC_UPDATE_BYTES of them. */
const DocBytes = bytesSchema({ maxLength: MAX_DOC_UPDATE_BYTES });

const DocOpen = z.object({
  doc: z.string().regex(ROOM_NAME, 'A document name is 1-32 letters, digits, "_", "." or "-".'),
});

/**
 * The shared document's events. A page opens one document at a time (`doc.open`, which
 * joins the document's room in namespace `/docs`) and sends its Yjs updates as bytes; the
 * server relays each to the document's other pages, unread and unchanged, and the room's
 * history keeps it. Documents follow the chat rooms' rules: the same names, and `private-*`
 * ones for signed-in users only.
 */
export function createDocController(limits: DemoLimits = BASE_LIMITS) {
  class DocController extends SocketController<ControllerHost, DocServerEvents, DocClientEvents> {
    @SocketOn('doc.open', { schema: DocOpen })
    @RateLimit(limits.roomJoin)
    open(clientId: string, data: { doc: string }): { doc: string } {
      const { doc } = data;
      const server = this.getServer();
      const decision = decideRoomJoin(userOf(server, clientId), doc, '/');
      if (!decision.allowed) throw new ChatRefusal(decision.code, decision.reason, { doc });
      const previous = server.getClientData(clientId, DOC_KEY);
      if (typeof previous === 'string' && previous !== doc) {
        this.leaveRoom(clientId, previous, DOC_NAMESPACE);
      }
      server.setClientData(clientId, DOC_KEY, doc);
      this.joinRoom(clientId, doc, DOC_NAMESPACE);
      return { doc };
    }

    @SocketOn('doc.update', { schema: DocBytes })
    @RateLimit(limits.docUpdate)
    update(clientId: string, data: Uint8Array): { relayed: true } {
      return this.#relay(clientId, 'doc.update', data);
    }

    @SocketOn('doc.state', { schema: DocBytes })
    @RateLimit(limits.docState)
    state(clientId: string, data: Uint8Array): { relayed: true } {
      return this.#relay(clientId, 'doc.state', data);
    }

    /**
     * Sends the bytes to the sender's document, without the sender, as they came (one binary
     * frame each), kept in the document's history.
     */
    #relay(clientId: string, event: keyof DocServerEvents, data: Uint8Array): { relayed: true } {
      const doc = this.getServer().getClientData(clientId, DOC_KEY);
      if (typeof doc !== 'string') {
        throw new ChatRefusal(
          NOT_IN_DOC,
          'Open a document before you edit it: send doc.open {"doc": "notes"} first.',
          { event },
        );
      }
      this.broadcast(event, data, DOC_NAMESPACE, doc, { except: clientId });
      return { relayed: true };
    }
  }
  return new DocController();
}

/** The controller `createDocController` returns. */
export type DocController = ReturnType<typeof createDocController>;

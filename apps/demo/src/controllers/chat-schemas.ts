import { z } from 'zod';
import { MAX_NAME_LENGTH } from '../names';
import { ROOM_NAME } from '../room-policy';

/** Longest chat or broadcast message accepted, in characters. */
export const MAX_MESSAGE_LENGTH = 2000;

const message = z
  .string()
  .max(MAX_MESSAGE_LENGTH)
  .refine((text) => text.trim() !== '', 'The message must not be blank.');

const room = z.string().regex(ROOM_NAME, 'A room name is 1-32 letters, digits, "_", "." or "-".');

/** `chat.message`: a non-blank message. */
export const ChatMessage = z.object({ message });

/**
 * The body of `POST /api/broadcast`: a non-blank message and, optionally, the one chat room
 * it goes to (without it, every client). Unknown keys are refused, so a misspelt `room`
 * never turns into a broadcast to everyone.
 */
export const BroadcastBody = z.strictObject({ message, room: room.optional() });

/** `room.join`: a room name (letters, digits, `_ . -`, 1-32) and an optional display name. */
export const RoomJoin = z.object({
  room,
  name: z
    .string()
    .max(MAX_NAME_LENGTH)
    .refine((name) => name.trim() !== '', 'The name must not be blank.')
    .optional(),
});

import { z } from 'zod';
import { MAX_NAME_LENGTH } from '../names';
import { ROOM_NAME } from '../room-policy';

/** Longest chat or broadcast message accepted, in characters. */
export const MAX_MESSAGE_LENGTH = 2000;

/** `chat.message` and the body of `POST /api/broadcast`: a non-blank message. */
export const ChatMessage = z.object({
  message: z
    .string()
    .max(MAX_MESSAGE_LENGTH)
    .refine((text) => text.trim() !== '', 'The message must not be blank.'),
});

/** `room.join`: a room name (letters, digits, `_ . -`, 1-32) and an optional display name. */
export const RoomJoin = z.object({
  room: z.string().regex(ROOM_NAME, 'A room name is 1-32 letters, digits, "_", "." or "-".'),
  name: z
    .string()
    .max(MAX_NAME_LENGTH)
    .refine((name) => name.trim() !== '', 'The name must not be blank.')
    .optional(),
});

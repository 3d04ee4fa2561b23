// Echo round trips in bursts on one WebSocket: `inflight` messages written at once (in one
// write of the client's socket, so that the server reads them together, as it reads a client
// that pipelines), then every answer awaited before the next burst. With `inflight` 1 it is
// one round trip at a time. Shared by instructions.mjs and syscalls.mjs, which count a
// server's cost per round trip.

/**
 * The next `n` events from the server; an Engine.IO ping (`2`, answered by the socket.io
 * opener) is not one.
 */
export function nextReplies(socket, n) {
  return new Promise((resolve) => {
    let left = n;
    const onMessage = (data, isBinary) => {
      if (!isBinary && data.length === 1 && data[0] === 0x32) return;
      if (--left > 0) return;
      socket.off('message', onMessage);
      resolve();
    };
    socket.on('message', onMessage);
  });
}

/**
 * `count` round trips of `message` on `socket` (a `ws` client), `inflight` at a time. The
 * burst is corked on the client's TCP socket (`ws` keeps it as `_socket`), so it leaves in
 * one write.
 */
export async function echoBursts(socket, message, count, inflight = 1) {
  for (let done = 0; done < count; done += inflight) {
    const k = Math.min(inflight, count - done);
    const replies = nextReplies(socket, k);
    if (k === 1) socket.send(message);
    else {
      socket._socket.cork();
      for (let i = 0; i < k; i++) socket.send(message);
      socket._socket.uncork();
    }
    await replies;
  }
}

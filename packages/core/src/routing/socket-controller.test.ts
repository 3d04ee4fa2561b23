import { describe, expect, it } from '@jest/globals';
import { NullLogger } from '@pkg/logger';
import { Server } from '../server';
import { SocketController } from './socket-controller';

class Plain extends SocketController {}

describe('SocketController', () => {
  it('says clearly when it is used before registration', () => {
    const controller = new Plain();
    expect(controller.server).toBeNull();
    expect(() => controller.getServer()).toThrow(
      /Plain is not registered with a server yet: call server\.registerController/,
    );
    expect(() => controller.emit('a', 'e', {})).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_CORE_NO_SERVER' }),
    );
  });

  it('gets its server from registerController and forwards to it', () => {
    const server = new Server('127.0.0.1', 0, false, {}, new NullLogger());
    const controller = new Plain();
    server.registerController(controller);
    expect(controller.getServer()).toBe(server);
    expect(controller.server).toBe(server);
    expect(controller.getClientCount()).toBe(0);
    expect(controller.getAllClients()).toEqual([]);
    expect(controller.emit('nobody', 'e', {})).toBe(false);
    expect(() => controller.broadcast('e', {})).not.toThrow();
    expect(() => controller.broadcastToRoomClients('e', {}, 'room', '/', 'nobody')).not.toThrow();
    expect(controller.joinRoom('nobody', 'r')).toBe(false);
    expect(() => controller.leaveRoom('nobody', 'r')).not.toThrow();
    expect(() => controller.disconnectClient('nobody')).not.toThrow();
  });

  it('lets a bad event name fail where the message is produced', () => {
    const server = new Server('127.0.0.1', 0, false, {}, new NullLogger());
    const controller = new Plain();
    server.registerController(controller);
    expect(() => controller.broadcast('bad name!', {})).toThrow(TypeError);
  });
});

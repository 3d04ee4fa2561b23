import { LocalAdapter, type Adapter } from './adapter';

/**
 * The server's current adapter (in-memory until `setAdapter`): read by the adapter bridge
 * and by room history, which are built one after the other and both follow a replacement.
 */
export class AdapterSlot {
  adapter: Adapter = new LocalAdapter();
}

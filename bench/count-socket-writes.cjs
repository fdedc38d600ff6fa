// Counts socket writes, for bench/release-profile.ts (node -r ./bench/count-socket-writes.cjs ...): a diagnostic preload.
const net = require('node:net');
const write = net.Socket.prototype.write;
globalThis.__writes = { calls: 0, bytes: 0 };
net.Socket.prototype.write = function (chunk, ...rest) {
  globalThis.__writes.calls++;
  globalThis.__writes.bytes += chunk?.length ?? 0;
  return write.call(this, chunk, ...rest);
};

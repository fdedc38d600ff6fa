const net = require('node:net');
const fs = require('node:fs');
const write = net.Socket.prototype.write;
let n = 0;
net.Socket.prototype.write = function (chunk, ...rest) {
  if (this.remotePort) { n++; if (n > 3000 && n < 3005) fs.appendFileSync('/tmp/cmds.txt', JSON.stringify(String(chunk)) + '\n'); }
  return write.call(this, chunk, ...rest);
};

/*!
 * launcher.js - one bcoin 1.0.2 full node for bloomwatch's integration
 * tests (bcoin.Start in testnet/bcoin runs it with node; not for use
 * elsewhere).
 *
 * The node is bcoin's own FullNode, built the way bcoin's bin/node builds
 * it, minus the wallet plugin, with these settings:
 *
 *   - regtest, an in-memory chain and mempool (memory: true), no worker
 *     processes, the pure-JS crypto backend (NODE_BACKEND=js: npm ran
 *     with --ignore-scripts, nothing native is built);
 *   - no bcoin.conf, no command-line or BCOIN_* environment options: the
 *     only configuration is the JSON object in argv[2];
 *   - P2P and HTTP/JSON-RPC listeners on 127.0.0.1 only, RPC behind the
 *     API key (HTTP basic auth password);
 *   - BIP37 served (bip37: true advertises NODE_BLOOM and answers
 *     filterload, MSG_FILTERED_BLOCK and mempool);
 *   - nothing outbound but the 127.0.0.1 peers named in the config: no
 *     DNS or static seeds, no UPnP, no external-address lookup, no
 *     resolver, no dialling of addresses learned from peers (see
 *     lockDown below).
 *
 * It prints "bloomwatch-bcoin: ready" on stdout once the node listens,
 * and closes the node on SIGINT or SIGTERM.
 */

'use strict';

process.title = 'bloomwatch-bcoin';

// bcrypto picks its backend when first required.
process.env.NODE_BACKEND = 'js';

const Module = require('module');
const net = require('net');
const path = require('path');

// bdb requires the native leveldown when it is loaded, even for a memory
// database that never uses it: resolve that one request to the stub
// next to this file (leveldown-stub.js explains why it is never called).
const LEVELDOWN_STUB = path.join(__dirname, 'leveldown-stub.js');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolveLeveldown(request, ...args) {
  if (request === 'leveldown')
    return LEVELDOWN_STUB;
  return resolveFilename.call(this, request, ...args);
};

const FullNode = require('bcoin/lib/node/fullnode');

/**
 * Fail unless host is the IPv4 loopback address.
 */

function requireLoopback(host, what) {
  if (host !== '127.0.0.1')
    throw new Error(`bloomwatch: ${what} ${host} is not 127.0.0.1`);
}

/**
 * Parse and check the configuration in argv[2].
 */

function readConfig() {
  if (process.argv.length !== 3)
    throw new Error('usage: launcher.js CONFIG-JSON');
  const cfg = JSON.parse(process.argv[2]);
  for (const key of ['p2pPort', 'httpPort']) {
    if (!Number.isInteger(cfg[key]) || cfg[key] <= 0 || cfg[key] > 0xffff)
      throw new Error(`bloomwatch: bad ${key}: ${cfg[key]}`);
  }
  if (typeof cfg.apiKey !== 'string' || cfg.apiKey.length < 16)
    throw new Error('bloomwatch: apiKey must be a string of at least 16 characters');
  cfg.peers = cfg.peers || [];
  if (!Array.isArray(cfg.peers))
    throw new Error('bloomwatch: peers must be an array');
  for (const peer of cfg.peers) {
    const i = peer.lastIndexOf(':');
    requireLoopback(i < 0 ? peer : peer.slice(0, i), 'peer');
  }
  cfg.logLevel = cfg.logLevel || 'info';
  return cfg;
}

/**
 * Close every path by which the pool could reach beyond the peers
 * configured. Options do most of it (seeds: [] and upnp: false); these
 * replace the methods bcoin has no option for.
 */

function lockDown(pool) {
  // UPnP gateway discovery (also off by upnp: false).
  pool.discoverGateway = async () => false;
  // Pool.discoverExternal asks OpenDNS's resolvers for the public IP
  // whenever the node listens and knows no routable local address; no
  // option turns it off short of a proxy.
  pool.discoverExternal = async () => {};
  // DNS seeds (none with seeds: [], and regtest's only seed is the
  // static 127.0.0.1:48444, which seeds: [] drops too).
  pool.discoverSeeds = async () => {};
  pool.hosts.discoverSeeds = async () => {};
  pool.hosts.discoverNodes = async () => {};
  pool.hosts.resolve = async (name) => {
    throw new Error(`bloomwatch: DNS disabled (asked for ${name})`);
  };
  // Outbound peers come only from the configured nodes (and addnode),
  // never from addresses peers advertise.
  pool.getHost = function getHost() {
    for (const addr of this.hosts.nodes) {
      if (!this.peers.has(addr.hostname))
        return addr;
    }
    return null;
  };
  // Last line: no socket to anything but 127.0.0.1.
  pool.options.createSocket = (port, host) => {
    requireLoopback(host, 'outbound connection to');
    return net.connect(port, host);
  };
}

async function main() {
  const cfg = readConfig();

  const node = new FullNode({
    network: 'regtest',
    config: false,
    argv: false,
    env: false,
    memory: true,
    workers: false,
    logFile: false,
    logConsole: true,
    logLevel: cfg.logLevel,
    indexTX: true,
    persistentMempool: false,
    bip37: true,
    listen: true,
    host: '127.0.0.1',
    port: cfg.p2pPort,
    publicHost: '127.0.0.1',
    publicPort: cfg.p2pPort,
    seeds: [],
    nodes: cfg.peers,
    maxOutbound: Math.max(1, cfg.peers.length),
    upnp: false,
    httpHost: '127.0.0.1',
    httpPort: cfg.httpPort,
    apiKey: cfg.apiKey
  });

  lockDown(node.pool);

  let closing = false;
  const shutdown = async () => {
    if (closing)
      return;
    closing = true;
    try {
      await node.close();
    } catch (e) {
      console.error(e.stack);
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  await node.ensure();
  await node.open();
  await node.connect();
  node.startSync();

  console.log('bloomwatch-bcoin: ready');
}

// As bcoin's bin/node: an unhandled rejection is fatal.
process.on('unhandledRejection', (err) => {
  throw err;
});

main().catch((err) => {
  console.error(err.stack);
  process.exit(1);
});

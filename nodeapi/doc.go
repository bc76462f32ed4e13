// Package nodeapi is the local API of a running bloomwatch node: the
// process that syncs a wallet (bloomwatch sync, bloomwatch demo) serves
// JSON-RPC 2.0 over HTTP on 127.0.0.1 or on a unix socket in its data dir,
// and the command line (and any Go program) asks it for what the wallet
// holds while the node keeps the wallet's files locked.
//
// The model is bitcoind and bitcoin-cli: the server writes a cookie
// (DATADIR/.cookie, "__cookie__:" and 32 random bytes in hex, mode 0600,
// new at every start) and its address (DATADIR/api.address), and a client
// that can read them authenticates with HTTP basic auth. Dial finds the
// node of a data dir; Open returns that node's client, or, when no node
// runs there, a Local reader on the wallet's files: the caller asks the
// same Wallet interface either way.
//
// Data flows one way: the server reads what the running session's wallet
// holds (package wallet's queries, safe for concurrent use with the sync)
// and hands it over; the client decodes it into the same wallet types.
// docs/API.md documents every method.
package nodeapi

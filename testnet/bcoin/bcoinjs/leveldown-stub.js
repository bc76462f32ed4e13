/*!
 * leveldown-stub.js - what bloomwatch's bcoin launcher resolves in place of
 * the native leveldown module.
 *
 * bcoin 1.0.2's database layer, bdb 0.2.x, loads leveldown eagerly:
 * bdb/lib/bdb.js requires './level', and bdb/lib/level.js is
 * `module.exports = require('leveldown')`, whose first lines load the
 * compiled binding (`require('bindings')('leveldown')`). npm installs
 * with --ignore-scripts, so no binding is built and that require would
 * throw before any database exists.
 *
 * A memory database never touches it: bdb.create({memory: true}) returns
 * `new DB(MemDB, 'memory', options)`, DB.init() instantiates only the
 * backend it was given (MemDB), and DB.clone() reuses that backend;
 * `Level` is used only on the `create` branch without `memory`. The
 * launcher starts bcoin with `memory: true`, so this constructor is never
 * called; if a change ever asks for an on-disk database, it fails loudly
 * here instead of silently running something else.
 */

'use strict';

function LevelDOWN(location) {
  throw new Error('bloomwatch: leveldown is not installed (npm --ignore-scripts); '
    + 'bcoin must run with an in-memory database, asked for ' + location);
}

LevelDOWN.destroy = function destroy(location, callback) {
  callback(new Error('bloomwatch: leveldown is not installed: cannot destroy ' + location));
};

LevelDOWN.repair = function repair(location, callback) {
  callback(new Error('bloomwatch: leveldown is not installed: cannot repair ' + location));
};

module.exports = LevelDOWN;

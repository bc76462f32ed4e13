package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
	"github.com/bloomwatch/bloomwatch/internal/boundedread"
	"github.com/bloomwatch/bloomwatch/privacy/element"
)

// UniverseFile is the name, in the light node's directory (next to the
// transcript), of the privacy meter's universe estimate: the
// transactions counted in the merkleblocks the wallet's peers served,
// kept across restarts.
const UniverseFile = "universe.json"

// maxUniverseFileBytes bounds UniverseFile when it is read: it holds a
// few numbers; a larger one is logged and ignored, as a malformed one is.
const maxUniverseFileBytes = 1 << 20

// universeVersion is the format version of UniverseFile.
const universeVersion = 1

// UniversePath returns the universe estimate of the wallet in datadir.
func UniversePath(datadir string) string {
	return filepath.Join(NodePath(datadir), UniverseFile)
}

// universeState is UniverseFile's content: Txs transactions were counted
// in the merkleblocks of heights From..To (the total each merkleblock
// states, which its merkle root commits to but a light client cannot
// check without the transactions).
type universeState struct {
	Version      int    `json:"version"`
	Network      string `json:"network"`
	From         int32  `json:"from_height"`
	To           int32  `json:"to_height"`
	Txs          uint64 `json:"txs"`
	ScriptsPerTx int    `json:"scripts_per_tx"`
}

// universeFeed keeps the meter's universe |A|: the transactions of the
// blocks filtered in earlier runs (base) plus this run's (spv's
// Status.Tested), times element.ScriptsPerTx; on mainnet the whole
// chain's figure (element.MainnetChainTxData) instead, since the
// adversary tests every script on chain, not only those of the blocks
// this wallet fetched.
type universeFeed struct {
	path    string
	network string
	base    universeState // earlier runs, as loaded
	cur     universeState // base plus this run
	runFrom int32         // first block of this run (-1: none yet)
	kept    uint64        // the part of base this run did not count again
}

// loadUniverse reads the estimate of dir. A missing file starts from
// nothing; a malformed one, or one of another network, is logged and
// ignored (the estimate is only the meter's, never the wallet's).
func loadUniverse(dir, network string, log *slog.Logger) universeFeed {
	u := universeFeed{path: filepath.Join(dir, UniverseFile), network: network, runFrom: -1}
	u.base = universeState{Version: universeVersion, Network: network, From: -1, To: -1, ScriptsPerTx: element.ScriptsPerTx}
	raw, err := boundedread.ReadFile(u.path, maxUniverseFileBytes, "maxUniverseFileBytes")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		log.Warn("privacy meter: universe estimate unreadable, starting over", "path", u.path, "err", err)
	default:
		var st universeState
		if err := json.Unmarshal(raw, &st); err != nil || st.Version != universeVersion || st.Network != network || st.From > st.To {
			log.Warn("privacy meter: universe estimate malformed, starting over", "path", u.path, "err", err)
			break
		}
		u.base = st
	}
	u.cur, u.kept = u.base, u.base.Txs
	return u
}

// block notes a block this run filtered: the first one fixes where this
// run's count starts. When it starts inside the range earlier runs
// counted (a rescan), the counted range's part below it is kept, pro rata
// (the per-block counts are not stored), and this run's count replaces
// the rest.
func (u *universeFeed) block(h int32, again bool) {
	if u.runFrom >= 0 || again {
		return
	}
	u.runFrom = h
	b := u.base
	switch {
	case b.To < 0 || h > b.To:
		u.kept = b.Txs
	case h <= b.From:
		u.kept = 0
	default:
		u.kept = uint64(float64(b.Txs) * float64(h-b.From) / float64(b.To-b.From+1))
	}
}

// update sets this run's count: tested transactions through height to.
func (u *universeFeed) update(tested uint64, to int32) {
	if u.runFrom < 0 {
		return
	}
	c := u.base
	if c.From < 0 || u.runFrom < c.From {
		c.From = u.runFrom
	}
	c.To = max(to, u.runFrom)
	c.Txs = u.kept + tested
	u.cur = c
}

// size returns the universe the meter uses and its description.
func (u *universeFeed) size() (uint64, string) {
	if u.network == element.MainnetChainTxData.Network {
		return element.MainnetChainTxData.Candidates(), element.MainnetChainTxData.Describe()
	}
	c := u.cur
	if c.To < 0 {
		return 0, "no merkleblock counted yet (estimate kept in " + u.path + ")"
	}
	return element.UniverseFromTxs(c.Txs), element.DescribeTxUniverse(c.Txs, c.From, c.To, u.path)
}

// universeFileMode is UniverseFile's permission.
const universeFileMode = 0o600

// save writes the estimate atomically (atomicfile.Write: a temporary file
// renamed over it). Nothing counted, nothing written.
func (u *universeFeed) save() error {
	if u.cur.To < 0 {
		return nil
	}
	raw, err := json.Marshal(u.cur)
	if err != nil {
		return fmt.Errorf("encode universe estimate: %w", err)
	}
	if err := atomicfile.Write(u.path, append(raw, '\n'), universeFileMode); err != nil {
		return fmt.Errorf("save universe estimate: %w", err)
	}
	return nil
}

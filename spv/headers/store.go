package headers

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Option configures Open.
type Option func(*config)

type config struct {
	clock      func() time.Time
	repair     func(Repair)
	sideMargin int
	maxSide    int
}

// WithClock sets the clock the two-hour future-timestamp rule reads
// (default time.Now).
func WithClock(clock func() time.Time) Option {
	return func(c *config) {
		if clock != nil {
			c.clock = clock
		}
	}
}

// WithSideBranchLimits sets how many blocks' work a side branch may trail
// the best chain by (DefaultSideBranchMargin) and how many side-branch
// headers stay stored at most (DefaultMaxSideHeaders; those with the least
// work are evicted past it); values below 1 keep the defaults.
func WithSideBranchLimits(margin, maxSide int) Option {
	return func(c *config) {
		if margin > 0 {
			c.sideMargin = margin
		}
		if maxSide > 0 {
			c.maxSide = maxSide
		}
	}
}

// WithRepairHook sets a function Open calls when it repairs the file (a
// torn last record after a crash). Without it repairs are only visible
// through Store.Repairs.
func WithRepairHook(fn func(Repair)) Option {
	return func(c *config) { c.repair = fn }
}

// Store is a persistent header chain. See the package documentation.
type Store struct {
	// wmu serializes writers (Connect, Close) for a whole batch; mu
	// guards the index and is released while a batch is fsynced, so that
	// readers never wait for the disk.
	wmu     sync.Mutex
	mu      sync.RWMutex
	sync    func(*os.File) error // fsync; a test hook
	net     *netparams.Network
	rules   *rules
	clock   func() time.Time
	path    string
	f       *os.File
	lock    *os.File
	size    int64 // bytes of headers.dat that are durable
	nodes   nodeArena
	index   hashIndex // nodes 0 to index.count-1 (see indexNew)
	best    []int32   // best chain: node index by height
	tipHdr  wire.BlockHeader
	repairs []Repair
	closed  bool
	pending []byte // records of the batch being connected
	memo    walkMemo
	// sideMargin and maxSide bound side branches (connect.go, evict.go).
	sideMargin, maxSide int
}

// Reorg describes a change of best chain to another branch.
type Reorg struct {
	// ForkHeight and ForkHash identify the last common block.
	ForkHeight int32
	ForkHash   chainhash.Hash
	// Detached is the old branch above the fork, tip first.
	Detached []chainhash.Hash
	// Attached is the new branch above the fork, fork first (ascending
	// height).
	Attached []chainhash.Hash
}

// ConnectResult is what a Connect batch changed.
type ConnectResult struct {
	// Accepted is the number of headers newly stored (headers already
	// known are not counted).
	Accepted int
	// NewTip reports that the best tip changed.
	NewTip bool
	// Reorg is set when the best chain moved to another branch (not a
	// plain extension of the old tip).
	Reorg *Reorg
	// Evicted is the number of side-branch headers evicted to keep the
	// bound (evict.go), of this batch or earlier ones.
	Evicted int
	// Dropped is the number of this batch's new headers that were valid
	// but evicted at once (their side branch had the least work of all);
	// Accepted does not count them.
	Dropped int
}

// Open opens (creating it if needed) the header store of net in dir. The
// file is validated: a torn last record is truncated and reported, and
// anything else wrong is a *CorruptError (errors.Is ErrCorrupt, and
// ErrWrongNetwork for another network's file).
func Open(dir string, net *netparams.Network, opts ...Option) (*Store, error) {
	if net == nil {
		return nil, fmt.Errorf("headers: nil network")
	}
	cfg := config{clock: time.Now, sideMargin: DefaultSideBranchMargin, maxSide: DefaultMaxSideHeaders}
	for _, o := range opts {
		o(&cfg)
	}
	r, err := newRules(net)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("headers: create %s: %w", dir, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("headers: open lock: %w", err)
	}
	if err := lockFile(lock); err != nil {
		lock.Close()
		return nil, err
	}
	s, err := open(dir, net, r, cfg, lock)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return s, nil
}

func open(dir string, net *netparams.Network, r *rules, cfg config, lock *os.File) (*Store, error) {
	path := filepath.Join(dir, FileName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := createFile(path, net.Params.Net, &net.Params.GenesisBlock.Header); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("headers: stat %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("headers: open %s: %w", path, err)
	}
	s := &Store{net: net, rules: r, clock: cfg.clock, path: path, f: f, lock: lock, sideMargin: cfg.sideMargin, maxSide: cfg.maxSide,
		sync: (*os.File).Sync}
	lf, err := loadFile(f, path, r, func(rp Repair) {
		s.repairs = append(s.repairs, rp)
		if cfg.repair != nil {
			cfg.repair(rp)
		}
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	s.nodes, s.index, s.size = lf.nodes, lf.index, lf.size

	// The best tip: most work, first stored among equals.
	tip := int32(0)
	for i := int32(1); i < int32(s.nodes.len()); i++ {
		if s.nodes.at(i).work.cmp(s.nodes.at(tip).work) > 0 {
			tip = i
		}
	}
	s.best = make([]int32, s.nodes.at(tip).height+1, s.nodes.at(tip).height+1+wire.MaxBlockHeadersPerMsg)
	for i := tip; i != noParent; i = s.nodes.at(i).parent {
		s.best[s.nodes.at(i).height] = i
	}
	if s.overBudget(tip) {
		// More side-branch headers than the bound (a lower bound than
		// the file was written with): evict as Connect would have.
		oldSize := s.size
		remap, evicted, err := s.evictSide(int32(s.nodes.len()), tip)
		if remap == nil {
			f.Close()
			return nil, err
		}
		tip = remap[tip]
		if err != nil {
			s.f.Close()
			return nil, err
		}
		rp := Repair{Path: path, OldSize: oldSize, NewSize: s.size, Dropped: evicted,
			Reason: fmt.Sprintf("side-branch headers above the bound of %d evicted, least work first", s.maxSide)}
		s.repairs = append(s.repairs, rp)
		if cfg.repair != nil {
			cfg.repair(rp)
		}
	}
	if s.tipHdr, err = s.readHeader(tip); err != nil {
		s.f.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the file. Later calls return ErrClosed (getters return
// zero values).
func (s *Store) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	err := s.f.Close()
	if lerr := s.lock.Close(); err == nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("headers: close: %w", err)
	}
	return nil
}

// Network returns the store's network.
func (s *Store) Network() *netparams.Network { return s.net }

// Repairs returns the repairs Open made.
func (s *Store) Repairs() []Repair {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]Repair(nil), s.repairs...)
}

// tipIndex is the node index of the best tip.
func (s *Store) tipIndex() int32 { return s.best[len(s.best)-1] }

// Tip returns the hash and height of the best tip.
func (s *Store) Tip() (chainhash.Hash, int32) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.nodes.at(s.tipIndex())
	return n.hash, n.height
}

// TipHeader returns the header of the best tip.
func (s *Store) TipHeader() wire.BlockHeader {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tipHdr
}

// TipWork returns the cumulative work of the best chain.
func (s *Store) TipWork() *big.Int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nodes.at(s.tipIndex()).work.big()
}

// Count returns the number of stored headers, side branches included.
func (s *Store) Count() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nodes.len()
}

// readHeader reads the header of node i from the file (or from the batch
// being written).
func (s *Store) readHeader(i int32) (wire.BlockHeader, error) {
	off := recordOffset(i)
	if s.closed {
		return wire.BlockHeader{}, ErrClosed
	}
	if off >= s.size {
		p := off - s.size
		return decodeHeader(s.pending[p : p+headerLen]), nil
	}
	var rec [recordLen]byte
	if _, err := s.f.ReadAt(rec[:], off); err != nil {
		return wire.BlockHeader{}, fmt.Errorf("headers: read record %d: %w", i, err)
	}
	if !recordOK(rec[:]) {
		return wire.BlockHeader{}, &CorruptError{Path: s.path, Offset: off,
			Reason: fmt.Sprintf("record %d changed on disk (checksum)", i)}
	}
	return decodeHeader(rec[:headerLen]), nil
}

// HeaderByHeight returns the best chain's header at height h.
func (s *Store) HeaderByHeight(h int32) (wire.BlockHeader, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if h < 0 || int(h) >= len(s.best) {
		return wire.BlockHeader{}, fmt.Errorf("%w: height %d (tip %d)", ErrNotFound, h, len(s.best)-1)
	}
	return s.readHeader(s.best[h])
}

// HashByHeight returns the hash of the best chain's header at height h.
func (s *Store) HashByHeight(h int32) (chainhash.Hash, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if h < 0 || int(h) >= len(s.best) {
		return chainhash.Hash{}, fmt.Errorf("%w: height %d (tip %d)", ErrNotFound, h, len(s.best)-1)
	}
	return s.nodes.at(s.best[h]).hash, nil
}

// HeaderByHash returns a stored header of any branch and its height.
func (s *Store) HeaderByHash(hash chainhash.Hash) (wire.BlockHeader, int32, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.index.lookup(&s.nodes, &hash)
	if !ok {
		return wire.BlockHeader{}, 0, fmt.Errorf("%w: header %v", ErrNotFound, hash)
	}
	h, err := s.readHeader(i)
	return h, s.nodes.at(i).height, err
}

// HeightByHash returns the height of a stored header of any branch.
func (s *Store) HeightByHash(hash chainhash.Hash) (int32, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.index.lookup(&s.nodes, &hash)
	if !ok {
		return 0, fmt.Errorf("%w: header %v", ErrNotFound, hash)
	}
	return s.nodes.at(i).height, nil
}

// IsBest reports whether hash is on the best chain.
func (s *Store) IsBest(hash chainhash.Hash) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.index.lookup(&s.nodes, &hash)
	return ok && s.onBest(i)
}

// ForkPoint returns the height and hash of the highest best-chain block
// that is the stored header hash or one of its ancestors: the header itself
// when it is on the best chain, otherwise where its side branch forks off.
func (s *Store) ForkPoint(hash chainhash.Hash) (int32, chainhash.Hash, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.index.lookup(&s.nodes, &hash)
	if !ok {
		return 0, chainhash.Hash{}, fmt.Errorf("%w: header %v", ErrNotFound, hash)
	}
	for !s.onBest(i) { // genesis is always on the best chain
		i = s.nodes.at(i).parent
	}
	return s.nodes.at(i).height, s.nodes.at(i).hash, nil
}

// onBest reports whether node i is on the best chain.
func (s *Store) onBest(i int32) bool {
	h := s.nodes.at(i).height
	return int(h) < len(s.best) && s.best[h] == i
}

// node implements chainView.
func (s *Store) node(i int32) *node { return s.nodes.at(i) }

// walkMemo implements chainView.
func (s *Store) walkMemo() *walkMemo { return &s.memo }

// ancestor implements chainView: the index of node i's ancestor at height
// (which must not exceed node i's height). It walks parents until it
// reaches the best chain, then jumps.
func (s *Store) ancestor(i int32, height int32) int32 {
	for s.nodes.at(i).height > height {
		if s.onBest(i) {
			return s.best[height]
		}
		i = s.nodes.at(i).parent
	}
	return i
}

// Remove deletes the header store in dir (the remedy for ErrCorrupt:
// delete and sync again). It refuses with ErrLocked while a Store has the
// directory open. Other files in dir are left alone.
func Remove(dir string) error {
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("headers: open lock: %w", err)
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return err
	}
	for _, name := range []string{FileName, FileName + ".tmp"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("headers: remove: %w", err)
		}
	}
	return nil
}

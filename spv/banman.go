package spv

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// banListFile is the name of the ban list in the data dir.
const banListFile = "bans.json"

// banListVersion is the format version written to the ban list.
const banListVersion = 1

// Ban is one banned peer address.
type Ban struct {
	// Addr is the address as dialed (host:port). Bans are per address,
	// not per IP: test peers and honest nodes share 127.0.0.1.
	Addr   string    `json:"addr"`
	Reason string    `json:"reason"`
	Score  uint32    `json:"score"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
}

// banList is the on-disk form.
type banList struct {
	Version int   `json:"version"`
	Bans    []Ban `json:"bans"`
}

// banManager keeps ban scores of connected peers (in memory) and bans
// (persisted in the data dir with their expiry). It is safe for concurrent
// use.
type banManager struct {
	path     string
	clock    timeSource
	duration time.Duration

	mu     sync.Mutex
	scores map[string]uint32
	bans   map[string]Ban
}

// openBanManager loads the ban list in dir (none yet is fine) and drops
// expired bans. A file that cannot be parsed is an ErrCorruptBanList error
// and is left untouched.
func openBanManager(dir string, clock timeSource, duration time.Duration) (*banManager, error) {
	if clock == nil {
		clock = systemClock{}
	}
	if duration <= 0 {
		return nil, fmt.Errorf("%w: ban duration %v", ErrBadConfig, duration)
	}
	b := &banManager{
		path:     filepath.Join(dir, banListFile),
		clock:    clock,
		duration: duration,
		scores:   make(map[string]uint32),
		bans:     make(map[string]Ban),
	}
	var list banList
	found, err := readState(b.path, "ban list", &list, &list.Version, banListVersion, ErrCorruptBanList)
	if err != nil {
		if errors.Is(err, ErrCorruptBanList) {
			err = fmt.Errorf("%w (delete the file to start without bans)", err)
		}
		return nil, err
	}
	if !found {
		return b, nil
	}
	now := clock.Now()
	for _, ban := range list.Bans {
		if ban.Addr == "" {
			return nil, fmt.Errorf("%w: %s: ban without address", ErrCorruptBanList, b.path)
		}
		if ban.Until.After(now) {
			b.bans[ban.Addr] = ban
		}
	}
	return b, nil
}

// IsBanned reports whether addr is banned now, with the ban.
func (b *banManager) IsBanned(addr string) (Ban, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ban, ok := b.bans[addr]
	if !ok {
		return Ban{}, false
	}
	if !ban.Until.After(b.clock.Now()) {
		delete(b.bans, addr)
		return Ban{}, false
	}
	return ban, true
}

// Score returns addr's current ban score.
func (b *banManager) Score(addr string) uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.scores[addr]
}

// Misbehaving adds m's score to addr. When the score reaches banThreshold
// the address is banned (and the list saved); the ban is returned with
// banned true. A save error is returned but the ban holds in memory.
func (b *banManager) Misbehaving(addr string, m misbehavior, detail string) (score uint32, ban Ban, banned bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	score = b.scores[addr] + m.Score()
	b.scores[addr] = score
	if score < banThreshold {
		return score, Ban{}, false, nil
	}
	reason := m.String()
	if detail != "" {
		reason += ": " + detail
	}
	ban = b.banLocked(addr, reason, score, b.duration)
	return score, ban, true, b.saveLocked()
}

// Ban bans addr for d (the manager's duration when d <= 0) and saves the
// list.
func (b *banManager) Ban(addr, reason string, d time.Duration) (Ban, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d <= 0 {
		d = b.duration
	}
	ban := b.banLocked(addr, reason, b.scores[addr], d)
	return ban, b.saveLocked()
}

// banLocked records a ban and resets the score.
func (b *banManager) banLocked(addr, reason string, score uint32, d time.Duration) Ban {
	now := b.clock.Now()
	ban := Ban{Addr: addr, Reason: reason, Score: score, Since: now, Until: now.Add(d)}
	b.bans[addr] = ban
	delete(b.scores, addr)
	return ban
}

// Unban lifts a ban and saves the list.
func (b *banManager) Unban(addr string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.bans, addr)
	return b.saveLocked()
}

// ForgetScore clears addr's score (a reconnect starts clean).
func (b *banManager) ForgetScore(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.scores, addr)
}

// Bans returns the bans in force, sorted by address.
func (b *banManager) Bans() []Ban {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	out := make([]Ban, 0, len(b.bans))
	for addr, ban := range b.bans {
		if !ban.Until.After(now) {
			delete(b.bans, addr)
			continue
		}
		out = append(out, ban)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out
}

// saveLocked writes the bans in force atomically: a temp file, fsync,
// rename, fsync of the directory.
func (b *banManager) saveLocked() error {
	now := b.clock.Now()
	list := banList{Version: banListVersion, Bans: make([]Ban, 0, len(b.bans))}
	for _, ban := range b.bans {
		if ban.Until.After(now) {
			list.Bans = append(list.Bans, ban)
		}
	}
	sort.Slice(list.Bans, func(i, j int) bool { return list.Bans[i].Addr < list.Bans[j].Addr })
	return writeState(b.path, "ban list", list)
}

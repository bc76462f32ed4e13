package nodeapi

import (
	"context"
	"errors"

	"github.com/bloomwatch/bloomwatch/wallet"
)

// Open returns the Wallet of data dir dir: the running node's client when
// one serves it, else a Local reader on the wallet's files, opened with
// opts. close releases it (closing the wallet it opened).
func Open(ctx context.Context, dir string, opts ...wallet.Option) (w Wallet, close func() error, err error) {
	c, err := Dial(ctx, dir)
	if err == nil {
		return c, func() error { c.Close(); return nil }, nil
	}
	if !errors.Is(err, ErrNoNode) {
		return nil, nil, err
	}
	ww, err := wallet.Open(dir, opts...)
	if err != nil {
		return nil, nil, err
	}
	return &Local{W: ww}, ww.Close, nil
}

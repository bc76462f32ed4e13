package wallet

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func TestReadAddressList(t *testing.T) {
	list, err := ReadAddressList(strings.NewReader("# exported\naddr1\n\n  addr2  # second\n#addr3\naddr4"), "f.txt")
	require.NoError(t, err)
	require.Equal(t, []ListedAddress{{"addr1", "f.txt line 2"}, {"addr2", "f.txt line 4"}, {"addr4", "f.txt line 6"}}, list)

	for _, tc := range []struct {
		name, body string
		want       error
		msg        string
	}{
		{"two words", "a\nb label\n", ErrBadAddressList, "f.txt line 2: one address per line, found 2 words"},
		{"too long", "a\n" + strings.Repeat("x", MaxAddressLine+1) + "\n", ErrBadAddressList, "f.txt line 2: longer than 65536 bytes"},
		{"empty", "# nothing\n\n", ErrEmptyAddressList, "f.txt holds no address"},
		{"nothing", "", ErrEmptyAddressList, "f.txt holds no address"},
	} {
		_, err := ReadAddressList(strings.NewReader(tc.body), "f.txt")
		require.ErrorIs(t, err, tc.want, tc.name)
		require.Equal(t, tc.msg, err.Error(), tc.name)
		require.True(t, IsInputError(err), tc.name)
	}
	broken := errors.New("disk on fire")
	_, err = ReadAddressList(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(broken)), "f.txt")
	require.ErrorIs(t, err, broken)
	require.False(t, IsInputError(err))
}

// TestAddAddressList checks that a refused list names the entry by where
// it was given, keeps the wallet's error for errors.Is/As, and imports
// nothing; a good list is imported.
func TestAddAddressList(t *testing.T) {
	w, _ := newRegtestWallet(t)
	batch := benchAddresses(t, 3)
	list := func(addrs ...string) []ListedAddress {
		out := make([]ListedAddress, len(addrs))
		for i, a := range addrs {
			out[i] = ListedAddress{Address: a, Where: "f.txt line " + string(rune('1'+i))}
		}
		return out
	}
	_, err := w.AddAddressList(list(batch[0], "bcrt1qnotanaddress"))
	require.ErrorIs(t, err, ErrInvalidAddress)
	require.True(t, IsInputError(err))
	require.True(t, strings.HasPrefix(err.Error(), `f.txt line 2: address "bcrt1qnotanaddress": wallet: invalid address`), err.Error())
	require.True(t, strings.HasSuffix(err.Error(), "; nothing was imported"), err.Error())
	_, err = w.AddAddressList(list(batch[0], batch[1], batch[0]))
	require.ErrorIs(t, err, ErrDuplicate)
	require.Equal(t, "f.txt line 3: address "+batch[0]+" repeats f.txt line 1; nothing was imported", err.Error())

	infos, err := w.AddAddressList(list(batch...))
	require.NoError(t, err)
	require.Len(t, infos, 3)
	_, err = w.AddAddressList(list(batch[2]))
	require.ErrorIs(t, err, ErrDuplicate)
	require.True(t, strings.HasPrefix(err.Error(), "f.txt line 1: "), err.Error())
}

func TestIsInputError(t *testing.T) {
	for _, err := range []error{ErrNoWallet, ErrExists, ErrWrongNetwork, ErrUnknownNetwork, ErrDuplicate,
		inputErr("xpub", "x", ErrInvalidKey), &ListError{Index: 0, Same: -1, Err: inputErr("address", "a", ErrInvalidAddress)}} {
		require.True(t, IsInputError(err), "%v", err)
	}
	for _, err := range []error{ErrCorrupt, ErrInUse, ErrClosed, errors.New("io")} {
		require.False(t, IsInputError(err), "%v", err)
	}
}

func TestOverview(t *testing.T) {
	w, _ := newRegtestWallet(t)
	_, err := w.AddAddress(benchAddresses(t, 1)[0])
	require.NoError(t, err)
	o, err := w.Overview()
	require.NoError(t, err)
	require.Equal(t, w.Dir(), o.Datadir)
	require.Equal(t, w.Network(), o.Network)
	require.Equal(t, w.Birthday(), o.Birthday)
	ext, in := w.GapLimits()
	require.Equal(t, [2]uint32{ext, in}, [2]uint32{o.GapExternal, o.GapInternal})
	accounts, err := w.Accounts()
	require.NoError(t, err)
	require.Equal(t, accounts, o.Accounts)
	require.NotNil(t, o.Descriptors)
	require.Len(t, o.Imported, 1)
	require.True(t, o.Imported[0].Imported)
	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, st.Elements, o.Elements)
}

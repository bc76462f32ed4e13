package wallet

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ListedAddress is one address of a list imported with AddAddressList,
// and where it was given in the user's terms ("--address #2", "FILE line
// 17"), which errors repeat.
type ListedAddress struct {
	Address string
	Where   string
}

// MaxAddressLine bounds a line of an address list (ReadAddressList).
const MaxAddressLine = 1 << 16

// MaxAddressListBytes bounds a whole address list (ReadAddressList): about
// 250,000 addresses of 64 characters. A larger list is refused, with one
// line, and nothing is imported.
const MaxAddressListBytes = 16 << 20

// Errors of ReadAddressList; test for them with errors.Is.
var (
	// ErrBadAddressList is wrapped by the error for a malformed line of
	// an address list (more than one word, or longer than
	// MaxAddressLine) and for a list longer than MaxAddressListBytes.
	ErrBadAddressList = errors.New("wallet: malformed address list")

	// ErrEmptyAddressList is wrapped by the error for an address list
	// that holds no address.
	ErrEmptyAddressList = errors.New("wallet: address list holds no address")
)

// listError names what refused a list in the user's terms (msg) and
// wraps the reason, so errors.Is and errors.As still find it.
type listError struct {
	msg string
	err error
}

// Error implements error.
func (e *listError) Error() string { return e.msg }

// Unwrap returns the reason.
func (e *listError) Unwrap() error { return e.err }

// ReadAddressList reads an address list from r: one address per line;
// blank lines and everything after a # are ignored. name names the list
// in errors and in each entry's Where ("NAME line N"). A malformed line
// returns an error naming it ("NAME line N: one address per line, found 2
// words") that wraps ErrBadAddressList; a list without an address, one
// wrapping ErrEmptyAddressList. Addresses are not decoded here:
// AddAddressList checks them all before it imports any.
func ReadAddressList(r io.Reader, name string) ([]ListedAddress, error) {
	var list []ListedAddress
	lr := &io.LimitedReader{R: r, N: MaxAddressListBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), MaxAddressLine)
	n := 0
	for sc.Scan() {
		n++
		if lr.N <= 0 {
			return nil, &listError{msg: fmt.Sprintf("%s: longer than wallet.MaxAddressListBytes (%d bytes)", name, MaxAddressListBytes), err: ErrBadAddressList}
		}
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		switch fields := strings.Fields(text); len(fields) {
		case 0:
		case 1:
			list = append(list, ListedAddress{Address: fields[0], Where: fmt.Sprintf("%s line %d", name, n)})
		default:
			return nil, &listError{msg: fmt.Sprintf("%s line %d: one address per line, found %d words", name, n, len(fields)), err: ErrBadAddressList}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &listError{msg: fmt.Sprintf("%s line %d: longer than %d bytes", name, n+1, MaxAddressLine), err: ErrBadAddressList}
		}
		return nil, err
	}
	if lr.N <= 0 {
		return nil, &listError{msg: fmt.Sprintf("%s: longer than wallet.MaxAddressListBytes (%d bytes)", name, MaxAddressListBytes), err: ErrBadAddressList}
	}
	if len(list) == 0 {
		return nil, &listError{msg: name + " holds no address", err: ErrEmptyAddressList}
	}
	return list, nil
}

// AddAddressList imports the addresses of list in one commit
// (AddAddresses): all or nothing. When an entry refuses the list, the
// error names it by its Where ("FILE line 5: address ...: wallet: invalid
// address; nothing was imported"; a repeated entry also names the entry
// it repeats) and wraps the entry's *InputError.
func (w *Wallet) AddAddressList(list []ListedAddress) ([]*ImportInfo, error) {
	addrs := make([]string, len(list))
	for i, a := range list {
		addrs[i] = a.Address
	}
	infos, err := w.AddAddresses(addrs)
	var le *ListError
	if !errors.As(err, &le) || le.Index < 0 || le.Index >= len(list) {
		return infos, err
	}
	at := list[le.Index].Where
	if le.Same >= 0 && le.Same < len(list) {
		return nil, &listError{msg: fmt.Sprintf("%s: address %s repeats %s; nothing was imported",
			at, list[le.Index].Address, list[le.Same].Where), err: le.Err}
	}
	return nil, &listError{msg: fmt.Sprintf("%s: %v; nothing was imported", at, le.Err), err: le.Err}
}

package wallet

// Overview describes a wallet in one value: its settings, what it
// watches, and the size of its filter (what `bloomwatch wallet create`
// prints).
type Overview struct {
	Datadir     string        `json:"datadir"`
	Network     string        `json:"network"`
	Birthday    int32         `json:"birthday"`
	GapExternal uint32        `json:"gap_external"`
	GapInternal uint32        `json:"gap_internal"`
	Accounts    []AccountInfo `json:"accounts"`
	// Descriptors is never nil, so it prints as [] when empty.
	Descriptors []DescriptorInfo `json:"descriptors"`
	// Imported lists the single addresses and scripts watched.
	Imported []AddressInfo `json:"imported"`
	// Elements counts the filter's data elements (Stats.Elements).
	Elements int `json:"filter_elements"`
}

// Overview returns the wallet's overview. Errors are those of the
// queries it makes (Accounts, Addresses, Stats, Descriptors).
func (w *Wallet) Overview() (Overview, error) {
	accounts, err := w.Accounts()
	if err != nil {
		return Overview{}, err
	}
	addrs, err := w.Addresses()
	if err != nil {
		return Overview{}, err
	}
	var imported []AddressInfo
	for _, a := range addrs {
		if a.Imported {
			imported = append(imported, a)
		}
	}
	st, err := w.Stats()
	if err != nil {
		return Overview{}, err
	}
	descs, err := w.Descriptors()
	if err != nil {
		return Overview{}, err
	}
	if descs == nil {
		descs = []DescriptorInfo{}
	}
	ext, in := w.GapLimits()
	return Overview{
		Datadir: w.Dir(), Network: w.Network(), Birthday: w.Birthday(), GapExternal: ext, GapInternal: in,
		Accounts: accounts, Descriptors: descs, Imported: imported, Elements: st.Elements,
	}, nil
}

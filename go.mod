module github.com/provgraph/provgraph

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/nlnwa/whatwg-url v0.6.2
	github.com/spf13/cobra v1.10.2
	golang.org/x/net v0.62.0
)

require (
	github.com/bits-and-blooms/bitset v1.20.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/text v0.43.0 // indirect
)

module github.com/provgraph/provgraph

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	golang.org/x/net v0.62.0
)

require golang.org/x/text v0.43.0 // indirect

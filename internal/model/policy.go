package model

// PolicyRef names a normalization policy as the graph records it: name,
// version and the digest of its text. A comparison key means something only
// under the policy it was computed by, so every key, group and export names
// one; the digest tells two texts that kept the same name and version apart.
type PolicyRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
}

// String returns "name@version", the form the --policy flags take.
func (p PolicyRef) String() string { return p.Name + "@" + p.Version }

package ingest

// SetHook sets the hook that File calls between its steps ("validated"
// after the validation pass, "written" after the last batch, and
// "ids-spilled" each time the check of citation ids writes a run to
// disk), so that
// external tests can change the input at a known point.
func SetHook(o *Options, hook func(event string)) { o.hook = hook }

// SetRenormChunk sets how many citations Renormalize reads from its spool
// at once, and returns a function that restores it.
func SetRenormChunk(n int) (restore func()) {
	old := renormChunk
	renormChunk = n
	return func() { renormChunk = old }
}

package query

// SetGroupsPerTask sets how many groups a task of GroupSet.Write holds,
// until the returned function restores it.
func SetGroupsPerTask(n int) (restore func()) {
	old := groupsPerTask
	groupsPerTask = n
	return func() { groupsPerTask = old }
}

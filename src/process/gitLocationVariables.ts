/**
 * git's location variables, set inside git hooks (a runner started from a hook has
 * them): a child that kept them would point its own git (an agent's, a check's, a
 * project's tests) at another repository. Every child the runner starts goes without.
 */
export const GIT_LOCATION_VARIABLES: readonly string[] = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_PREFIX', 'GIT_OBJECT_DIRECTORY'];

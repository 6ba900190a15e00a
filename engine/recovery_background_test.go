package engine

func init() {
	recoveryConfig = func(dir string) Config {
		return Config{DataDir: dir, CheckpointInterval: -1, RecoverViewsInBackground: true}
	}
}

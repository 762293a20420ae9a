package registry

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// OpenOptions say where the store lives. With DatabaseURL empty the store is
// SQLite in {DataDir}/cardex.db.
type OpenOptions struct {
	DataDir     string
	DatabaseURL string
	Logger      *slog.Logger
	// ServerLock takes the data directory's single-server lock
	// ({DataDir}/cardex.lock) and fails fast with ErrDataDirLocked when
	// another server holds it (docs/threats.md F.67). `serve` sets it;
	// short-lived tools such as `token create` do not, so they may run beside
	// a server (docs/api.md): SQLite's own locking and the busy timeout
	// keep their few writes safe. Ignored for PostgreSQL, where replicas
	// share one database by design.
	ServerLock bool
	// BusyTimeout bounds how long a SQLite write waits for another process
	// holding the write lock before failing with ErrUnavailable (F.63).
	// Zero means 5 s.
	BusyTimeout time.Duration
	// MustExist refuses to create a database: with SQLite the file
	// {DataDir}/cardex.db must exist, with PostgreSQL the database must
	// already carry Cardex's migrations; otherwise Open returns
	// ErrNoDatabase. Tools that act on a server's store (token, reindex)
	// set it, so a mistyped --data does not print a token for a database
	// no server reads.
	MustExist bool
}

// Dialect names.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// Store is the SQL store: a concrete type over gorm (CONTRIBUTING.md).
// Consumers declare the small interfaces they need of Service.
type Store struct {
	dialect string
	db      *gorm.DB // writes (SQLite: the one writer connection)
	rdb     *gorm.DB // reads (SQLite: a separate pool; PostgreSQL: same as db)
	wsql    *sql.DB
	rsql    *sql.DB
	unlock  func() error
	dataDir string
	log     *slog.Logger
	listed  sync.Map     // listedKey → prepared *sql.Stmt of Listed (list.go listedStmt)
	stats   plannerStats // SQLite planner statistics (planner.go)
}

// Open opens (creating if needed) and migrates the store.
func Open(ctx context.Context, o OpenOptions) (*Store, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var (
		s   *Store
		err error
	)
	if o.MustExist && o.DatabaseURL == "" {
		path := filepath.Join(o.DataDir, sqliteFile)
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%w in --data %s (%s does not exist)", ErrNoDatabase, o.DataDir, path)
		}
	}
	if o.DatabaseURL != "" {
		s, err = openPostgres(o.DatabaseURL)
	} else {
		s, err = openSQLite(o)
	}
	if err != nil {
		return nil, err
	}
	if o.MustExist && o.DatabaseURL != "" {
		if err := s.mustBeMigrated(ctx); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.log = log
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	s.stats.every = plannerStatsEvery
	s.stats.last = time.Now()
	if err := s.optimize(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("planner statistics: %w", err)
	}
	return s, nil
}

func gormConfig() *gorm.Config {
	return &gorm.Config{
		// Every write goes through Store.tx; gorm's implicit per-statement
		// transactions would only add round trips.
		SkipDefaultTransaction: true,
		// SQL is never logged: statements carry token hashes and card bytes.
		Logger:  logger.Discard,
		NowFunc: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
	}
}

func openPostgres(dsn string) (*Store, error) {
	if _, err := url.Parse(dsn); err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(10)
	db.SetConnMaxIdleTime(5 * time.Minute)
	g, err := gorm.Open(postgres.New(postgres.Config{Conn: db}), gormConfig())
	if err != nil {
		db.Close()
		return nil, translate(fmt.Errorf("open database: %w", err))
	}
	return &Store{dialect: DialectPostgres, db: g, rdb: g, wsql: db, rsql: db, unlock: func() error { return nil }}, nil
}

// sqliteDSN sets every pragma in the DSN so each connection gets it
// (docs/design.md "Dependencies"): WAL so readers never block the writer; busy_timeout so a
// second process (a `token create` beside a server) waits instead of failing;
// foreign keys on; synchronous=NORMAL, which in WAL mode never corrupts the
// database and loses no committed transaction when the process is killed
// (docs/threats.md F.61 is about kill -9); only an OS crash or power cut can
// roll back the last few commits, a trade taken for the crawler's write rate
// (FULL costs an fsync per commit). Write transactions are BEGIN IMMEDIATE so
// a transaction that reads then writes never hits SQLITE_BUSY on upgrade
// (F.63).
func sqliteDSN(path string, busy time.Duration, readOnly bool) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", fmt.Sprint(busy.Milliseconds()))
	q.Set("_foreign_keys", "on")
	q.Set("_synchronous", "NORMAL")
	// Each connection keeps its most used prepared statements: compiling
	// the same few queries again on every request was a tenth of an
	// approval's CPU (docs/benchmarks.md "Approval throughput") and a
	// twentieth of the server's while a catalogue was submitted and
	// crawled ("Under real load").
	q.Set("_stmt_cache_size", fmt.Sprint(sqliteStmtCache))
	if readOnly {
		q.Set("_query_only", "1")
		q.Set("_txlock", "deferred")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// sqliteStmtCache is how many prepared statements each SQLite connection
// keeps for reuse.
const sqliteStmtCache = 64

// sqliteFile is the SQLite database's name inside the data directory.
const sqliteFile = "cardex.db"

// mustBeMigrated returns ErrNoDatabase unless the PostgreSQL database
// already holds goose's version table, i.e. Cardex migrated it before.
func (s *Store) mustBeMigrated(ctx context.Context) error {
	var n int64
	err := s.rsql.QueryRowContext(ctx,
		`SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'goose_db_version'`).Scan(&n)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w in --database-url (no Cardex tables in that database)", ErrNoDatabase)
	}
	return nil
}

func openSQLite(o OpenOptions) (*Store, error) {
	if o.DataDir == "" {
		return nil, errors.New("open store: no data directory and no database URL")
	}
	if err := os.MkdirAll(o.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	unlock := func() error { return nil }
	if o.ServerLock {
		u, err := lockDataDir(o.DataDir)
		if err != nil {
			return nil, err
		}
		unlock = u
	}
	busy := o.BusyTimeout
	if busy <= 0 {
		busy = 5 * time.Second
	}
	path := filepath.Join(o.DataDir, sqliteFile)
	w, err := sql.Open("sqlite3", sqliteDSN(path, busy, false))
	if err != nil {
		unlock()
		return nil, fmt.Errorf("open database: %w", err)
	}
	// One writer connection (docs/design.md "Dependencies"): writers queue in Go's pool
	// instead of fighting over SQLite's lock.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	// Touch the file through the writer first so it exists (and is in WAL
	// mode) before read-only connections open it.
	if err := w.Ping(); err != nil {
		w.Close()
		unlock()
		return nil, translate(fmt.Errorf("open database %s: %w", path, err))
	}
	r, err := sql.Open("sqlite3", sqliteDSN(path, busy, true))
	if err != nil {
		w.Close()
		unlock()
		return nil, fmt.Errorf("open database: %w", err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	gw, err := gorm.Open(sqlite.New(sqlite.Config{Conn: w}), gormConfig())
	if err == nil {
		var gr *gorm.DB
		gr, err = gorm.Open(sqlite.New(sqlite.Config{Conn: r}), gormConfig())
		if err == nil {
			return &Store{dialect: DialectSQLite, db: gw, rdb: gr, wsql: w, rsql: r, unlock: unlock, dataDir: o.DataDir}, nil
		}
	}
	w.Close()
	r.Close()
	unlock()
	return nil, translate(fmt.Errorf("open database: %w", err))
}

// Close releases the connections and the data directory lock.
func (s *Store) Close() error {
	s.stopStats()
	var errs []error
	s.listed.Range(func(_, st any) bool {
		errs = append(errs, st.(*sql.Stmt).Close())
		return true
	})
	if s.rsql != s.wsql {
		errs = append(errs, s.rsql.Close())
	}
	errs = append(errs, s.wsql.Close(), s.unlock())
	return errors.Join(errs...)
}

// DataDir is the SQLite data directory ("" for PostgreSQL).
func (s *Store) DataDir() string { return s.dataDir }

// Dialect is DialectSQLite or DialectPostgres.
func (s *Store) Dialect() string { return s.dialect }

// Ping checks that the database answers (for /readyz). It uses the read
// pool so a busy SQLite writer never makes the probe time out.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rsql.PingContext(ctx); err != nil {
		return translate(err)
	}
	return nil
}

// tx is the one transaction helper: fn runs in a write transaction (SQLite:
// BEGIN IMMEDIATE on the single writer connection), committed when it returns
// nil. Driver errors leave it translated (translate).
func (s *Store) tx(ctx context.Context, fn func(tx *gorm.DB) error) error {
	if err := s.db.WithContext(ctx).Transaction(fn); err != nil {
		return translate(err)
	}
	s.afterWrite()
	return nil
}

// read is the handle for queries outside a transaction.
func (s *Store) read(ctx context.Context) *gorm.DB { return s.rdb.WithContext(ctx) }

// utc is how every timestamp is written: UTC, microsecond precision (what
// PostgreSQL keeps), so SQLite's text timestamps compare in time order and
// values read back equal values written.
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := utc(*t)
	return &u
}

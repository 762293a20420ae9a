package registry

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"
)

// errUniqueViolation marks a UNIQUE constraint failure; the use cases turn
// it into their own answer (DuplicateError, a taken token name).
var errUniqueViolation = errors.New("unique constraint violated")

// translate maps driver errors to the store's sentinels at the boundary
// (CONTRIBUTING.md): not found, unique violations, and everything that
// means "try again later" (docs/threats.md F.63 busy past the wait, F.66
// read-only or full disk, lost connections) as ErrUnavailable. Errors that
// already are domain errors pass through untouched.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gorm.ErrRecordNotFound) || errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrReadonly, sqlite3.ErrFull,
			sqlite3.ErrIoErr, sqlite3.ErrCantOpen, sqlite3.ErrNomem, sqlite3.ErrProtocol:
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		case sqlite3.ErrConstraint:
			if se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey {
				return fmt.Errorf("%w: %w", errUniqueViolation, err)
			}
		}
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505":
			return fmt.Errorf("%w: %w", errUniqueViolation, err)
		case pe.Code == "25006", // read_only_sql_transaction
			pe.Code == "40001", pe.Code == "40P01", // serialization failure, deadlock: retry
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // shutting down
			len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code[:2] == "53" || pe.Code[:2] == "58"):
			// 08 connection, 53 insufficient resources (53100 disk full), 58 system error.
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

"""One loader per suite format, each yielding the same typed Suite."""

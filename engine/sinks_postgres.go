package engine

// The PostgreSQL sink (CREATE SINK ... WITH (connector = 'postgres')).
import _ "github.com/streamsql/streamsql/connector/pgsink" // registers "postgres"

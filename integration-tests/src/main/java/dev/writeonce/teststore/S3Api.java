package dev.writeonce.teststore;

/** The S3 operations the meters tell apart, whatever each store calls them. */
public enum S3Api {
  PUT_OBJECT,
  COPY_OBJECT,
  CREATE_MULTIPART_UPLOAD,
  UPLOAD_PART,
  COMPLETE_MULTIPART_UPLOAD,
  ABORT_MULTIPART_UPLOAD,
  LIST_MULTIPART_UPLOADS,
  LIST_PARTS,
  GET_OBJECT,
  HEAD_OBJECT,
  LIST_OBJECTS,
  DELETE_OBJECT,
  DELETE_OBJECTS,
  OTHER
}

;;; emacs_dump.el --- Byte-compiles and loads editors/emacs/dap-strata.el, writes what it registers  -*- lexical-binding: t; -*-

;; Run by check_editors.py: emacs --batch -Q -l emacs_dump.el
;;
;; Environment: STRATA_EMACS_DIR (editors/emacs), STRATA_EMACS_OUT (the JSON written here),
;; STRATA_EMACS_WORK (a folder for the .elc), STRATA_EMACS_SCRIPT (the buffer a template runs
;; from), STRATA_EMACS_PROGRAM (the answer to "Program: "), STRATA_EMACS_PID (the process
;; picked), STRATA_DAP (strata-dap-path), STRATA_EMACS_TOKEN_FILE, STRATA_EMACS_STUB (1: never
;; the real dap-mode).
;;
;; dap-mode is the real one where Emacs finds it (Debian's elpa-dap-mode), else a stub that
;; only records registrations: then the check is that the file compiles and loads, and what it
;; registers, not dap-mode's own handling. Each template is resolved as `dap-debug' resolves it
;; (variables expanded, then the provider), and the arguments dap-mode would send in `launch' or
;; `attach' are written out for check_editors.py to send to the real adapter.

;;; Code:

(require 'cl-lib)
(require 'json)
(require 'package)

(defun strata-test--env (name)
  (or (getenv name) (error "%s is not set" name)))

(defvar strata-test--dap-mode "stub")

(unless (equal (getenv "STRATA_EMACS_STUB") "1")
  (add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
  (package-initialize)
  (when (require 'dap-mode nil t)
    (setq strata-test--dap-mode "real")))

(unless (featurep 'dap-mode)
  ;; The stub: dap-mode's public entry points that dap-strata.el uses.
  (defvar dap--debug-providers (make-hash-table :test 'equal))
  (defvar dap-debug-template-configurations nil)
  (defun dap-register-debug-provider (language-id provide-configuration-fn)
    (puthash language-id provide-configuration-fn dap--debug-providers))
  (defun dap-register-debug-template (configuration-name configuration-settings)
    (setq dap-debug-template-configurations
          (cons (cons configuration-name configuration-settings)
                (delq (assoc configuration-name dap-debug-template-configurations)
                      dap-debug-template-configurations))))
  (cl-defgeneric dap-handle-event (event-type session params))
  (cl-defmethod dap-handle-event (event-type _session _params)
    (message "No message handler for %s" event-type))
  (provide 'dap-mode))

(defvar strata-test--result nil)

(defun strata-test--put (key value)
  (setq strata-test--result (plist-put strata-test--result key value)))

(defun strata-test--expand (conf)
  "CONF with its variables expanded, as `dap-debug' does first."
  (cl-letf (((symbol-function 'dap-variables-pick-process)
             (lambda () (string-to-number (strata-test--env "STRATA_EMACS_PID")))))
    (if (fboundp 'dap-variables-expand-in-launch-configuration)
        (dap-variables-expand-in-launch-configuration conf)
      (cl-loop for (k v) on conf by #'cddr
               append (list k (cond ((equal v "${file}") (buffer-file-name))
                                    ((equal v "${command:pickProcess}")
                                     (string-to-number (strata-test--env "STRATA_EMACS_PID")))
                                    (t v)))))))

(defun strata-test--sent (launch-args)
  "The arguments dap-mode sends in `launch' or `attach' for LAUNCH-ARGS."
  (let ((args (copy-sequence launch-args)))
    (dolist (key '(:dap-compilation :dap-compilation-dir :cleanup-function :startup-function
                   :dap-server-path :environment-variables :wait-for-port :skip-debug-session
                   :program-to-start :path-mappings :debugServer :host))
      (cl-remf args key))
    args))

(defun strata-test--resolve (template)
  (let* ((conf (strata-test--expand (copy-tree template)))
         (provider (gethash (plist-get conf :type) dap--debug-providers))
         (launch-args (cl-letf (((symbol-function 'read-file-name)
                                 (lambda (&rest _) (strata-test--env "STRATA_EMACS_PROGRAM"))))
                        (funcall provider conf))))
    (list :server (plist-get launch-args :dap-server-path)
          :sent (strata-test--sent launch-args))))

(defun strata-test--json (value)
  (let ((json-false :json-false))
    (json-encode value)))

(condition-case err
    (let* ((dir (strata-test--env "STRATA_EMACS_DIR"))
           (work (strata-test--env "STRATA_EMACS_WORK"))
           (source (expand-file-name "dap-strata.el" dir))
           (byte-compile-dest-file-function
            (lambda (_) (expand-file-name "dap-strata.elc" work)))
           (byte-compile-error-on-warn t))
      (strata-test--put :dap_mode strata-test--dap-mode)
      (strata-test--put :emacs_version emacs-version)
      (add-to-list 'load-path dir)
      (unless (byte-compile-file source)
        (error "Byte-compiling %s failed" source))
      (strata-test--put :compiled t)
      (setq strata-dap-path (strata-test--env "STRATA_DAP"))
      (load (expand-file-name "dap-strata.elc" work) nil t)
      (strata-test--put :provider (functionp (gethash "strata" dap--debug-providers)))
      (strata-test--put :gpuActivity_handled
                        (with-temp-message ""
                          (let ((said nil))
                            (cl-letf (((symbol-function 'message)
                                       (lambda (&rest args) (setq said (apply #'format args)))))
                              (dap-handle-event 'gpuActivity nil nil))
                            (null said))))
      (with-current-buffer (find-file-noselect (strata-test--env "STRATA_EMACS_SCRIPT"))
        (let ((templates nil))
          (dolist (entry dap-debug-template-configurations)
            (when (string-prefix-p "Strata" (car entry))
              (push (list :name (car entry)
                          :template (cdr entry)
                          :resolved (strata-test--resolve (cdr entry)))
                    templates)))
          (strata-test--put :templates (vconcat (nreverse templates))))
        ;; tokenFile: read into `token', never sent itself.
        (let ((template (cdr (assoc "Strata :: Connect to an agent" dap-debug-template-configurations))))
          (when template
            (strata-test--put :token_resolved
                              (plist-get (strata-test--resolve
                                          (append template (list :tokenFile (strata-test--env "STRATA_EMACS_TOKEN_FILE"))))
                                         :sent))))
        ;; No strata-dap: the error says how to install it.
        (let ((strata-dap-path nil)
              (exec-path nil))
          (strata-test--put :missing_adapter
                            (condition-case e (progn (dap-strata--adapter) nil)
                              (user-error (error-message-string e))))))
      (strata-test--put :ok t))
  (error
   (strata-test--put :ok :json-false)
   (strata-test--put :error (error-message-string err))))

(with-temp-file (strata-test--env "STRATA_EMACS_OUT")
  (insert (strata-test--json strata-test--result)))

;;; emacs_dump.el ends here
